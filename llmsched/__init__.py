"""llmsched: which scheduler is at fault — Kubernetes, Ray/KubeRay or vLLM."""

__version__ = "0.1.0"
