for x in "${a[@]}" ${b[*]} *; do for y in $x; do kubectl apply -k "$x/$y"; done; done
a=( "x" y
 z )
