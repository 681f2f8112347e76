//go:build !unix

package idleprio

func lower(int) {}
