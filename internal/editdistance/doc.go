// Package editdistance measures how far apart two names are, for the "did
// you mean" hints of rule files, test files and resource names.
package editdistance
