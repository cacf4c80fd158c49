kubectl apply -f - <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: a
EOF
