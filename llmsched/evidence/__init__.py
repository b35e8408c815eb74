"""Pasted evidence → observations, each pointing at the file and line it came from.

`sniff` reads files, directories or stdin; `normalise` peels off what pasting adds
(quotes, fences, prompts, colours, log prefixes) once for every reader, and `rejoin`
folds wrapped lines back onto the line they start on; the
format readers (`kubectl_describe`, `k8s_events`, `tables`, `ray_status_text`, `prometheus`,
`structured`) find their blocks; every message line is matched against the signature
catalogue (`signatures/*.yaml`, loaded by `signatures`). `observations` holds what comes
out: `Observation`, `MetricsEvidence`, `SniffResult`. Nothing here judges; `diagnose`
reads the observations and decides. `triage` reads the person's own words (the
lines no format claims) against the symptom catalogue (`symptoms.yaml`).
"""
