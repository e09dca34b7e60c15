module strata.test/gohttp

go 1.19
