package dirtyjson

import (
	"strconv"
	"strings"
)

// maxNumberLen bounds the tokens tried as numbers, so classifying a pending token stays O(1).
const maxNumberLen = 256

// classify turns an unquoted value token into its value: a literal, a number, or else the text itself.
// num reports whether tok consists of number characters only (a cheap pre-check kept while reading).
func classify(tok string, num bool) any {
	if v, ok := literal(tok, num); ok {
		return v
	}
	return tok
}

// literal reports whether tok is a keyword literal or an in-range number, and its value.
func literal(tok string, num bool) (any, bool) {
	if len(tok) <= len("undefined") {
		switch {
		case strings.EqualFold(tok, "true"):
			return true, true
		case strings.EqualFold(tok, "false"):
			return false, true
		case strings.EqualFold(tok, "null"), strings.EqualFold(tok, "none"), strings.EqualFold(tok, "undefined"):
			return nil, true
		}
	}
	if !num || len(tok) > maxNumberLen || !isNumber(tok) {
		return nil, false
	}
	f, err := strconv.ParseFloat(strings.TrimPrefix(tok, "+"), 64)
	if err != nil {
		// isNumber checked the syntax, so this is overflow: the literal text is more useful than ±Inf.
		// (Underflow is no error: it rounds to zero.)
		return nil, false
	}
	return f, true
}

// isNumber reports whether s is [+-]? (digits [. digits*] | . digits) ([eE] [+-]? digits)?.
func isNumber(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && isDigit(s[i]) {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isNumberByte(c byte) bool {
	return isDigit(c) || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E'
}
