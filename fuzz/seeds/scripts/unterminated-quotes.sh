echo 'unterminated
kubectl apply -k "x
case $a in x) kubectl apply -k y;; esac
