package entity

// Sentences exposes sentences to the tests of package entity_test.
var Sentences = sentences

// WithKeys exposes withKeys to the tests of package entity_test.
var WithKeys = withKeys
