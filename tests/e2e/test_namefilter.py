"""hide_file and deny_file: vsftpd's name filters, {*.mp3,.private} style."""

import os

import pytest

from twhelpers import rc, retr, stor


@pytest.fixture
def hidden(make_server):
    s = make_server({"hide_file": "{*.mp3,.private}"})
    s.put("song.mp3", b"la la\n")
    s.put("keep.txt", b"keep\n")
    s.put(".private", b"psst\n")
    s.put(".visible", b"dot\n")
    s.put("sub/deep.mp3", b"deep\n")
    s.put("sub/deep.txt", b"deep txt\n")
    f = s.ftp("alice")
    yield s, f
    f.close()


def names_of(data):
    return [line for line in data.decode().split("\r\n") if line]


def test_hide_file_leaves_names_out_of_listings(hidden):
    _, f = hidden
    nlst = names_of(retr(f, "NLST -a")[0])
    assert "keep.txt" in nlst and ".visible" in nlst and "sub" in nlst, nlst
    assert "song.mp3" not in nlst and ".private" not in nlst, nlst
    listing = retr(f, "LIST -a")[0].decode()
    assert "keep.txt" in listing and ".visible" in listing, listing
    assert "song.mp3" not in listing and ".private" not in listing, listing
    mlsd = retr(f, "MLSD")[0].decode()
    assert "keep.txt" in mlsd, mlsd
    assert "song.mp3" not in mlsd and ".private" not in mlsd, mlsd
    cd, stat = rc(f, "STAT -a .")
    assert cd == 213 and "keep.txt" in stat, stat
    assert "song.mp3" not in stat and ".private" not in stat, stat
    # The last component is what counts, in any directory listed.
    sub = names_of(retr(f, "NLST sub")[0])
    assert sub == ["deep.txt"], sub


def test_hidden_names_stay_reachable(hidden):
    _, f = hidden
    data, _, final = retr(f, "RETR song.mp3")
    assert data == b"la la\n" and final.startswith("226"), final
    assert retr(f, "RETR .private")[0] == b"psst\n"
    assert retr(f, "RETR sub/deep.mp3")[0] == b"deep\n"
    assert rc(f, "SIZE song.mp3") == (213, "213 6")
    # Named directly, a hidden file is still listed (it is hidden, not denied).
    assert "song.mp3" in retr(f, "LIST song.mp3")[0].decode()


@pytest.fixture
def denied(make_server):
    s = make_server({"deny_file": "{*.iso,secret}"})
    s.put("disk.iso", b"iso\n")
    s.put("ok.txt", b"ok\n")
    s.put("secret/inner.txt", b"inner\n")
    s.mkdir("pub")
    f = s.ftp("alice")
    yield s, f
    f.close()


def refused(f, line):
    cd, resp = rc(f, line)
    assert (cd, resp) == (550, "550 Permission denied."), (line, resp)


def test_deny_file_refuses_matching_names(denied):
    s, f = denied
    for line in ("RETR disk.iso", "SIZE disk.iso", "MDTM disk.iso", "MLST disk.iso",
                 "DELE disk.iso", "RNFR disk.iso", "SITE CHMOD 600 disk.iso",
                 "LIST disk.iso", "NLST disk.iso", "STAT disk.iso",
                 "MKD new.iso", "CWD secret", "RMD secret", "MLSD secret",
                 "LIST secret", "STAT secret"):
        refused(f, line)
    assert os.path.exists(s.path("disk.iso"))
    assert os.path.isdir(s.path("secret"))
    assert not os.path.exists(s.path("new.iso"))
    # STOR and APPE are refused before any data connection opens.
    refused(f, "STOR up.iso")
    refused(f, "APPE disk.iso")
    assert not os.path.exists(s.path("up.iso"))
    assert s.read("disk.iso") == b"iso\n"
    # RNTO onto a denied name: the rename does not happen.
    assert rc(f, "RNFR ok.txt")[0] == 350
    refused(f, "RNTO ok.iso")
    assert os.path.exists(s.path("ok.txt")) and not os.path.exists(s.path("ok.iso"))
    # Denied names are still listed (deny_file does not hide).
    assert "disk.iso" in names_of(retr(f, "NLST")[0])


def test_deny_file_checks_every_component(denied):
    s, f = denied
    for path in ("secret/inner.txt", "/secret/inner.txt", "pub/../secret/inner.txt",
                 "./secret/inner.txt", "//secret//inner.txt"):
        refused(f, "RETR " + path)
    refused(f, "STOR secret/new.txt")
    refused(f, "DELE secret/inner.txt")
    assert not os.path.exists(s.path("secret/new.txt"))
    assert s.read("secret/inner.txt") == b"inner\n"
    # What is not denied works as before, "." and ".." included.
    assert retr(f, "RETR ok.txt")[0] == b"ok\n"
    assert rc(f, "CWD pub")[0] == 250
    assert rc(f, "CDUP")[0] == 250
    pre, final = stor(f, "STOR pub/new.txt", b"new\n")
    assert final.startswith("226"), final
    assert s.read("pub/new.txt") == b"new\n"


def test_stou_passes_over_denied_names(make_server):
    # STOU picks "name", then "name.1", ...: a pick the filter denies is
    # skipped, not created.
    s = make_server({"deny_file": "{*.1}"})
    s.put("up", b"old\n")
    f = s.ftp("alice")
    pre, final = stor(f, "STOU up", b"new\n")
    assert final.startswith("226"), final
    assert not os.path.exists(s.path("up.1"))
    assert s.read("up.2") == b"new\n"
    f.close()
