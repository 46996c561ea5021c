"""log_ftp_protocol: every command and reply in the log, passwords masked."""

from twhelpers import PASSWORDS


def test_protocol_logged_passwords_masked(make_server):
    s = make_server({"log_ftp_protocol": True})
    f = s.ftp("alice")
    f.sendcmd("NOOP")
    f.quit()
    s.wait_log(r'FTP response: Client "127\.0\.0\.1", "221 ')
    log = s.log_text()
    assert 'FTP response: Client "127.0.0.1", "220 ' in log, log
    assert 'FTP command: Client "127.0.0.1", "USER alice"' in log, log
    assert 'FTP command: Client "127.0.0.1", "PASS <password>"' in log, log
    assert 'FTP response: Client "127.0.0.1", "230 Login successful."' in log, log
    assert 'FTP command: Client "127.0.0.1", "NOOP"' in log, log
    assert PASSWORDS["alice"] not in log


def test_protocol_not_logged_by_default(make_server):
    s = make_server()
    f = s.ftp("alice")
    f.quit()
    s.wait_log(r"OK LOGIN")
    assert "FTP command" not in s.log_text()
