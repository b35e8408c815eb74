"""What llmsched knows about vLLM: its argument parser (`args`), how to tell a version
(`versions`) and its defaults per version and GPU class (`defaults`, data in
`defaults.yaml`)."""
