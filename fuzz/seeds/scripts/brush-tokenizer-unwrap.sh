${<<EOF
}
EOF
