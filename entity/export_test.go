package entity

// Sentences exposes sentences to the tests of package entity_test.
var Sentences = sentences
