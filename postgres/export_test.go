package postgres

// UserTables exposes userTables to the schema test.
var UserTables = userTables
