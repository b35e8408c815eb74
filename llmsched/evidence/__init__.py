"""Pasted evidence → observations, each pointing at the file and line it came from.

`sniff` reads files, directories or stdin and finds the formats in them
(`kubectl_describe`, `k8s_events`, `ray_status`, `prometheus`, `structured`); every
message line is matched against the signature catalogue (`signatures.yaml`, loaded by
`signatures`). `observations` holds what comes out: `Observation`, `MetricsEvidence`,
`SniffResult`. Nothing here judges; `diagnose` reads the observations and decides.
"""
