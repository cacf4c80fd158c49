bash -c "bash -c \"bash -c \\\"kubectl apply -k x\\\"\""
