kubectl apply -k {{.ROOT_DIR}}/{{if .A}}x{{else}}y{{end}} {{ 
kubectl apply -f "{{.X}}
