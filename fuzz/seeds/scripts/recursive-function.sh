f() { kubectl apply -k "$1"; f "$1"; }
f a
