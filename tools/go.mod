module github.com/politecrawl/robots/tools

go 1.24.0

require (
	github.com/politecrawl/robots v0.1.0
	github.com/temoto/robotstxt v1.1.2
)

require github.com/dunglas/httpsfv v1.1.2 // indirect

replace github.com/politecrawl/robots => ../
