"""`llmsched diagnose`: from symptoms to the responsible layer.

`llmsched.evidence` turns loose evidence (files or stdin, in whatever form users paste)
into `Observation`s, with the catalogue of messages each layer emits; this package parses
no text. `facts` joins observations, metrics and snapshots into the subjects the diagnose
rules judge; `ranking` runs the rules (CEL symptoms, or named `checks`) and ranks the
findings; `verdict` names the scheduler at fault; `confirm` replays vLLM findings.
"""
