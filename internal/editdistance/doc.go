// Package editdistance measures how far apart two names are, for the "did
// you mean" hints of rule files, test files and resource names.
//
// Hints compare what a user wrote, which may be of any length, with known
// names: they use AtMost, which costs time linear in the lengths, not
// Distance, which costs their product.
package editdistance
