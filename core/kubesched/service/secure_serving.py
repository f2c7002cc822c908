"""TLS for the health and metrics port, as kube-scheduler's secure serving sets it up: a given
certificate and key, or else a self-signed certificate made at start-up for the bind address
and the host's name (kept in memory's stead in a private temporary directory, 0600)."""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
import ssl
import tempfile

__all__ = ["server_context"]


def server_context(cert_file: str = "", key_file: str = "", address: str = "") -> ssl.SSLContext:
    """A server ``SSLContext`` (TLS 1.2 or later) for the given pair or a self-signed one."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if bool(cert_file) != bool(key_file):
        raise ValueError("a TLS certificate needs its key, and a key its certificate")
    if cert_file:
        context.load_cert_chain(cert_file, key_file)
        return context
    directory = tempfile.mkdtemp(prefix="kubesched-serving-")
    cert_path = os.path.join(directory, "tls.crt")
    key_path = os.path.join(directory, "tls.key")
    cert_pem, key_pem = _self_signed(address)
    for path, data in ((cert_path, cert_pem), (key_path, key_pem)):
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as f:
            f.write(data)
    context.load_cert_chain(cert_path, key_path)
    return context


def _self_signed(address: str) -> tuple[bytes, bytes]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    host = socket.gethostname()
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName(host), x509.DNSName("localhost")]
    for ip in {address or "127.0.0.1", "127.0.0.1"}:
        try:
            if ip not in ("0.0.0.0", "::"):
                names.append(x509.IPAddress(ipaddress.ip_address(ip)))
        except ValueError:
            pass
    now = datetime.datetime.now(datetime.UTC)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}@{int(now.timestamp())}")])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return (
        certificate.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )
