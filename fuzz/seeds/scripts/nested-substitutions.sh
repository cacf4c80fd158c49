X=$(kubectl create -f - <<EOF
kind: Namespace
EOF
)
echo "$(( 1 + $(echo 2) ))" "$(a "$(b "$(c)")")"
