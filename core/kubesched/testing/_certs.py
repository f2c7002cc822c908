"""Certificates and kubeconfigs for a throw-away control plane.

One CA signs the apiserver's serving certificate and every client certificate. The apiserver
trusts that CA for client authentication, so a certificate's CN is the user name and its O
entries are the user's groups, exactly as kube-apiserver's x509 authenticator reads them.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kubesched.testing._cluster import safe_file_stem

_VALIDITY = datetime.timedelta(days=2)
# Clocks and the apiserver's own view of "now" may disagree by a little.
_BACKDATE = datetime.timedelta(minutes=5)


@dataclass(frozen=True)
class KeyPair:
    """A PEM certificate (or public key) and its PEM (PKCS#8) private key, side by side."""

    cert_path: Path
    key_path: Path

    @property
    def cert_pem(self) -> bytes:
        return self.cert_path.read_bytes()

    @property
    def key_pem(self) -> bytes:
        return self.key_path.read_bytes()


def _new_key() -> ec.EllipticCurvePrivateKey:
    # P-256: accepted by kube-apiserver for serving, client and service-account keys, and
    # generated in microseconds where RSA takes tens of milliseconds.
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600)
    path.write_bytes(data)
    return path


class CertificateAuthority:
    """A self-signed CA kept in ``directory`` that issues serving and client certificates."""

    def __init__(self, directory: Path, common_name: str = "kubesched-test-ca") -> None:
        self.directory = directory
        self._key = _new_key()
        now = datetime.datetime.now(datetime.UTC)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _BACKDATE)
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(self._key.public_key()), critical=False
            )
            .sign(self._key, hashes.SHA256())
        )
        self.cert_path = _write(
            directory / "ca.crt", self._cert.public_bytes(serialization.Encoding.PEM)
        )

    @property
    def cert_pem(self) -> bytes:
        return self.cert_path.read_bytes()

    def _issue(
        self,
        stem: str,
        subject: x509.Name,
        usage: x509.ObjectIdentifier,
        sans: list[x509.GeneralName] | None = None,
    ) -> KeyPair:
        key = _new_key()
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _BACKDATE)
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()),
                critical=False,
            )
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        return KeyPair(
            cert_path=_write(
                self.directory / f"{stem}.crt", cert.public_bytes(serialization.Encoding.PEM)
            ),
            key_path=_write(self.directory / f"{stem}.key", _key_pem(key)),
        )

    def issue_serving(self, stem: str, host: str = "127.0.0.1") -> KeyPair:
        """A TLS server certificate valid for ``host`` and ``localhost``."""
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
        sans: list[x509.GeneralName] = [x509.DNSName("localhost")]
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
        return self._issue(stem, subject, ExtendedKeyUsageOID.SERVER_AUTH, sans)

    def issue_client(self, user: str, groups: tuple[str, ...] = ()) -> KeyPair:
        """A client certificate that kube-apiserver reads as ``user`` in ``groups``."""
        attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
        attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, user))
        return self._issue(
            f"client-{safe_file_stem(user, groups)}",
            x509.Name(attributes),
            ExtendedKeyUsageOID.CLIENT_AUTH,
        )


def write_service_account_keys(directory: Path) -> KeyPair:
    """The key pair kube-apiserver signs (private) and verifies (public) service-account tokens
    with, as ``service-account.key`` and ``service-account.pub``. ``cert_path`` is the public key.
    """
    key = _new_key()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return KeyPair(
        cert_path=_write(directory / "service-account.pub", public),
        key_path=_write(directory / "service-account.key", _key_pem(key)),
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def write_kubeconfig(path: Path, *, server: str, ca_pem: bytes, name: str, client: KeyPair) -> Path:
    """Write a self-contained kubeconfig (certificates embedded) with one context, ``name``."""
    user_entry = {
        "client-certificate-data": _b64(client.cert_pem),
        "client-key-data": _b64(client.key_pem),
    }
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "kubesched-test",
                "cluster": {"server": server, "certificate-authority-data": _b64(ca_pem)},
            }
        ],
        "users": [{"name": name, "user": user_entry}],
        "contexts": [{"name": name, "context": {"cluster": "kubesched-test", "user": name}}],
        "current-context": name,
        "preferences": {},
    }
    return _write(path, yaml.safe_dump(config, sort_keys=False).encode())
