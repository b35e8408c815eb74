"""`llmsched diagnose`: from symptoms to the responsible layer.

`sniff` turns loose evidence (files or stdin, in whatever form users paste) into
`evidence.Observation`s; `signatures` is the catalogue of error messages each layer
emits. `facts` joins observations, metrics and snapshots into the subjects the diagnose
rules judge; `ranking` runs the rules (CEL symptoms, or named `checks`) and ranks the
findings; `verdict` names the scheduler at fault; `confirm` replays vLLM findings.
"""
