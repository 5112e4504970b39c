"""TLS certificates for a Dask cluster: ``okgin cluster certs DIR`` and :func:`load_security`.

Why a CA of the cluster's own: Dask's TLS (``distributed.security.Security``) is mutual
(every side shows a certificate and checks the other's against a CA file) and checks no
host name (``check_hostname`` is off: clusters are addressed by IP). So the *whole* trust
is "signed by ``ca.pem``": a CA made for this cluster alone, and nothing else, admits
exactly the scheduler, workers and runners the organiser handed a certificate to. A
public CA would admit anyone with any certificate it ever signed.

Files written (PEM; keys mode 0600):

- ``ca.pem``: every host trusts it (scheduler, each worker, the runner);
- ``ca-key.pem``: signs the others; keep it on the organiser's machine only (a host
  that has it can mint itself into the cluster);
- ``scheduler.pem`` / ``scheduler-key.pem``: the scheduler's host only;
- ``worker.pem`` / ``worker-key.pem``: each worker host;
- ``client.pem`` / ``client-key.pem``: the host that runs ``okgin tournament`` or
  ``okgin match`` (the runner).

:func:`load_security` gives the ``Security`` of the runner (client certificate; with
``require_encryption``, so a ``tcp://`` address is refused instead of sent in clear),
plus the scheduler's and workers' pairs when present, so ``--dask local`` can start a
TLS ``LocalCluster`` from the same directory.

Keys are EC P-256 (fast handshakes, accepted by every OpenSSL that Python's ``ssl``
uses); certificates last ``days`` (default 825, the longest most TLS stacks accept).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROLES = ("scheduler", "worker", "client")
DEFAULT_HOSTS = ("127.0.0.1", "localhost")


class CertsError(Exception):
    """The certificates cannot be made or used (a sentence for the operator)."""


def _crypto() -> Any:
    try:
        import cryptography  # noqa: F401  (only the error matters here)
    except ImportError:
        raise CertsError("the 'cryptography' package is not installed: pip install 'okgin[cluster]' "
                         "(or pip install cryptography)") from None
    from cryptography import x509

    return x509


def _names(hosts: Sequence[str]) -> list[Any]:
    from cryptography import x509

    out: list[Any] = []
    for h in dict.fromkeys([*DEFAULT_HOSTS, *hosts]):
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            out.append(x509.DNSName(h))
    return out


def _write_key(path: Path, key: Any) -> None:
    from cryptography.hazmat.primitives import serialization

    data = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, 0o600)  # an existing file keeps its mode through O_CREAT


def _write_cert(path: Path, cert: Any) -> None:
    from cryptography.hazmat.primitives import serialization

    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def generate(directory: str | os.PathLike[str], hosts: Sequence[str] = (), days: int = 825, name: str = "okgin cluster",
             force: bool = False) -> list[Path]:
    """Write a CA and one certificate per role in ``directory``; return the paths.

    ``hosts``: names and IPs put in the certificates' subjectAltName beside 127.0.0.1 and
    localhost (Dask checks none, other TLS clients might). Refuses to overwrite an
    existing set unless ``force`` (a new CA would lock out every host given the old one).
    """
    x509 = _crypto()
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise CertsError(f"{d} exists and is not a directory")
    if (d / "ca.pem").exists() and not force:
        raise CertsError(f"{d / 'ca.pem'} exists: a new CA would lock out every host that has the old one "
                         "(give another directory, or --force to replace the set)")
    d.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    start, end = now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=days)

    def subject(cn: str) -> Any:
        return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, name), x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = subject(f"{name} CA")
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                                       encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    written = [d / "ca.pem", d / "ca-key.pem"]
    _write_cert(written[0], ca)
    _write_key(written[1], ca_key)
    for role in ROLES:
        key = ec.generate_private_key(ec.SECP256R1())
        # Each side of a Dask link is both a TLS server and a client (workers listen
        # too, clients only connect, but one usage set for all keeps them swappable).
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject(f"dask-{role}"))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
            )
            .add_extension(x509.SubjectAlternativeName(_names(hosts)), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        cert_path, key_path = d / f"{role}.pem", d / f"{role}-key.pem"
        _write_cert(cert_path, cert)
        _write_key(key_path, key)
        written += [cert_path, key_path]
    return written


def paths(directory: str | os.PathLike[str], role: str) -> tuple[Path, Path]:
    """(certificate, key) of ``role`` in ``directory``."""
    d = Path(directory)
    return d / f"{role}.pem", d / f"{role}-key.pem"


def load_security(directory: str | os.PathLike[str]) -> Any:
    """The runner's ``distributed.security.Security`` from a directory of ``okgin cluster certs``.

    Needs ``ca.pem``, ``client.pem`` and ``client-key.pem``; adds the scheduler's and the
    workers' pairs when they are there (for a TLS ``--dask local``). Encryption is
    required: a ``tcp://`` scheduler address then fails instead of talking in clear.
    """
    d = Path(directory)
    if not d.is_dir():
        raise CertsError(f"--dask-tls {d}: no such directory (make one with okgin cluster certs {d})")
    ca = d / "ca.pem"
    cert, key = paths(d, "client")
    missing = [p.name for p in (ca, cert, key) if not p.is_file()]
    if missing:
        raise CertsError(f"--dask-tls {d}: missing {', '.join(missing)} (okgin cluster certs writes them)")
    try:
        from distributed.security import Security
    except ImportError:
        raise CertsError("Dask is not installed: pip install 'okgin[cluster]'") from None
    kw: dict[str, Any] = {"tls_ca_file": str(ca), "tls_client_cert": str(cert), "tls_client_key": str(key)}
    for role in ("scheduler", "worker"):
        c, k = paths(d, role)
        if c.is_file() and k.is_file():
            kw[f"tls_{role}_cert"], kw[f"tls_{role}_key"] = str(c), str(k)
    return Security(require_encryption=True, **kw)


def dask_cli_args(directory: str | os.PathLike[str], role: str) -> list[str]:
    """The ``dask scheduler`` / ``dask worker`` options for ``role``'s files in ``directory``."""
    cert, key = paths(directory, role)
    return ["--tls-ca-file", str(Path(directory) / "ca.pem"), "--tls-cert", str(cert), "--tls-key", str(key)]
