module github.com/cuedeck/cuedeck/e2e

go 1.26
