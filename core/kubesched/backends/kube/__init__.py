"""Talking to a real kube-apiserver: raw JSON transport, list+watch informers, the backend."""
