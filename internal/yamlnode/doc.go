// Package yamlnode decodes yaml.v3 node trees by hand, for the files a
// user writes (rule files, test files): every problem is reported at the
// position of the value it is about, in a diag.ErrorList, and decoding
// goes on past it, so that a file is fixed in one round trip.
//
// A Decoder reports unknown fields with a did-you-mean suggestion,
// duplicate fields with where the first one is, and values of the wrong
// YAML type by what they are ("expected a string, got integer 2024").
// Strings must be strings: YAML users quote numbers where a string is
// meant, as kubectl requires. The rules and ruletest packages both decode
// with it, so that both formats report the same mistakes in the same
// words.
package yamlnode
