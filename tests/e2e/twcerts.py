"""Certificates for the TLS tests: make_cert, and the option lines of a
server with TLS on. The module-scoped `certs` fixture (conftest.py) makes
one set per test module."""

import datetime
import ipaddress
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from twhelpers import HOST


def make_cert(directory, name, days=30, expired=False, names=("localhost",), rsa_bits=0,
              key_format=serialization.PrivateFormat.PKCS8):
    """A self-signed EC P-256 (or RSA) certificate and key: (cert path, key
    path, key)."""
    key = (rsa.generate_private_key(65537, rsa_bits) if rsa_bits
           else ec.generate_private_key(ec.SECP256R1()))
    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = now - datetime.timedelta(days=1), now + datetime.timedelta(days=days)
    if expired:
        start, end = now - datetime.timedelta(days=10), now - datetime.timedelta(days=2)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    san = [x509.DNSName(n) for n in names] + [x509.IPAddress(ipaddress.ip_address(HOST))]
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(end)
            .add_extension(x509.SubjectAlternativeName(san), critical=False)
            .sign(key, hashes.SHA256()))
    cpath = os.path.join(directory, name + ".crt")
    kpath = os.path.join(directory, name + ".key")
    with open(cpath, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(kpath, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, key_format,
                                  serialization.NoEncryption()))
    os.chmod(kpath, 0o600)
    return cpath, kpath, key


def tls_opts(certs, **more):
    opts = {"ssl_enable": True, "rsa_cert_file": certs["good"][0],
            "rsa_private_key_file": certs["good"][1]}
    opts.update(more)
    return opts
