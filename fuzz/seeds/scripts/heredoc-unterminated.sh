cat <<-EOF | kubectl apply -f -
	kind: Secret
	metadata: {name: ${X}}
EOF
kubectl apply -f - <<EOF
unterminated
