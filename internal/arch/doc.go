// Package arch holds the tests that keep ARCHITECTURE.md and the README
// true: each of the project's packages imports only the packages its
// arrows allow, and the documents link only inside the repository.
package arch
