package lexical

// Stem exposes the stemmer to the tests of package lexical_test.
func Stem(w string) string { return string(stem([]byte(w))) }
