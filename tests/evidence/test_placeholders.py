"""Names a description gives fill the suggested commands' placeholders; names that are not
DNS words (a shell expansion) are never taken."""

from __future__ import annotations

from llmsched.evidence.placeholders import extract_names, fill_placeholders


def test_placeholders_are_filled_from_the_text() -> None:
    names = extract_names(
        "pod vllm-7d9f-x2 in namespace serving hangs; http://10.1.2.3:8080 times out"
    )
    assert names == {"pod": "vllm-7d9f-x2", "namespace": "serving", "host": "10.1.2.3:8080"}
    assert fill_placeholders("kubectl describe pod <pod> -n <namespace>", names) == (
        "kubectl describe pod vllm-7d9f-x2 -n serving"
    )
    assert fill_placeholders("curl -s http://<vllm-host>:8000/metrics", names) == (
        "curl -s http://10.1.2.3:8080/metrics"
    )
    assert (
        fill_placeholders("kubectl describe node <node>", names) == "kubectl describe node <node>"
    )


def test_names_that_are_not_dns_words_are_not_taken() -> None:
    names = extract_names("the pod is pending; namespace $(rm -rf /)")
    assert "namespace" not in names and "pod" not in names


def test_a_host_without_a_port_gets_the_engines_default_port() -> None:
    names = extract_names("curl http://vllm.serving.svc/metrics returns nothing")
    assert fill_placeholders("curl -s http://<vllm-host>:8000/metrics", names) == (
        "curl -s http://vllm.serving.svc:8000/metrics"
    )
