 kubectl　apply -k 😀 $'\x41' <<< "$(x)" < <(y) 2>&1 >(z)
