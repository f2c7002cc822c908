"""TLS for the health and metrics port, as kube-scheduler's secure serving sets it up: a given
certificate and key (``--tls-cert-file``/``--tls-private-key-file``), or else a self-signed
certificate made at start-up for the host's name, ``localhost`` and the bind address. The
self-signed pair lives only in memory once loaded: its files (0600, in a private temporary
directory, since ``ssl`` loads keys from files only) are removed at once."""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
import socket
import ssl
import tempfile

from kubesched.errors import KubeschedError

__all__ = ["server_context"]


def server_context(cert_file: str = "", key_file: str = "", address: str = "") -> ssl.SSLContext:
    """A server ``SSLContext`` (TLS 1.2 or later) for the given pair or a self-signed one;
    a pair that cannot be loaded is a :class:`KubeschedError` naming both files."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if bool(cert_file) != bool(key_file):
        given = "--tls-cert-file" if cert_file else "--tls-private-key-file"
        missing = "--tls-private-key-file" if cert_file else "--tls-cert-file"
        raise KubeschedError(f"{given} needs {missing} as well")
    if cert_file:
        try:
            context.load_cert_chain(cert_file, key_file)
        except (OSError, ssl.SSLError) as exc:
            raise KubeschedError(
                f"--tls-cert-file {cert_file} / --tls-private-key-file {key_file}: cannot load "
                f"the pair: {exc.strerror or exc}"
            ) from None
        return context
    directory = tempfile.mkdtemp(prefix="kubesched-serving-")
    try:
        cert_path = os.path.join(directory, "tls.crt")
        key_path = os.path.join(directory, "tls.key")
        cert_pem, key_pem = _self_signed(address)
        for path, data in ((cert_path, cert_pem), (key_path, key_pem)):
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as f:
                f.write(data)
        context.load_cert_chain(cert_path, key_path)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
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
