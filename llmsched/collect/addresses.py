"""The addresses a user gives ``collect`` (``--ray-address``, ``--vllm-url``), checked
before anything is fetched: an address that cannot be a dashboard or server URL is a
usage error (exit 2), not a failed source found later.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from llmsched.errors import LlmschedError

SCHEMES = ("http", "https")


def http_base(address: str, option: str) -> str:
    """``host:port``, ``http://host:port/`` or a browser URL of the Ray dashboard
    (``http://host:8265/#/overview``) → ``http://host:port`` (path kept, query and
    fragment dropped); anything else raises LlmschedError naming ``option``."""
    text = address.strip()
    if not text:
        raise LlmschedError(f"{option}: empty address")
    if "://" not in text:
        text = f"http://{text}"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise LlmschedError(f"{option} {address!r}: not a URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme == "ray":
        raise LlmschedError(
            f"{option} {address!r}: ray:// is the Ray Client port; "
            "give the dashboard's HTTP address (http://<head>:8265)"
        )
    if scheme not in SCHEMES:
        raise LlmschedError(f"{option} {address!r}: only http:// and https:// are supported")
    if not parts.hostname:
        raise LlmschedError(f"{option} {address!r}: no host")
    netloc = parts.netloc if port is None or port > 0 else ""
    if not netloc:
        raise LlmschedError(f"{option} {address!r}: port out of range")
    return urlunsplit((scheme, netloc, parts.path.rstrip("/"), "", ""))
