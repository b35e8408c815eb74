"""Pasted text turned into facts: sniffers, signature and symptom catalogues."""
