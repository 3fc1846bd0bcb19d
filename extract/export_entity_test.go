package extract

// IndexEntities exposes indexEntities to the tests of package extract_test.
var IndexEntities = (*Indexer).indexEntities

// Sentences exposes sentences.
var Sentences = sentences
