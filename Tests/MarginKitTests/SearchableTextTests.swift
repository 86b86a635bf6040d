import Foundation
import MarginCore
import TestSupport
import Testing

/// `SearchableText` reads a page's UTF-8 in one pass into buffers; these tests hold it to the
/// scalar-by-scalar reading it replaced (kept below as the reference), on hand-made edge cases
/// and on thousands of random texts mixing every kind of scalar the rules treat differently.
@Suite struct SearchableTextTests {
    /// Scalars the rules tell apart: letters, digits, ASCII and Unicode spaces, line breaks, the
    /// three hyphens, accents (precomposed and combining), ligatures, case folding that grows
    /// (İ, ß), scalars of 2, 3 and 4 UTF-8 bytes, and U+FDFA, which folds into 18 scalars.
    static let alphabet: [String] = [
        "a", "b", "Z", "q", "7", " ", " ", " ", "\n", "\n", "\r", "\r\n", "\t", "\u{0B}", "\u{0C}", "-", "-",
        "\u{00AD}", "\u{2010}", "\u{00A0}", "\u{2003}", "\u{3000}", "é", "e\u{0301}", "ﬁ", "ﬃ", "ß", "İ", "Σ", "ς", "漢",
        "😀",
        "\u{FDFA}", "_", ".", "(", "Ω", "ǅ", "Ⅻ", "①", "’", "“", "„", "–", "—", "\u{2212}", "a\u{00AD}b",
    ]

    @Test(arguments: [
        "", " ", "  \n ", "-", "-\n", "a-", "a-\n", "a-\nb", "a -\nb", "a-\n  b", "a- \n\tb", "a-\r\nb", "a-\n\n-\nb",
        "in-\ndex and co-\noperation", "1-\n2", "x-\n😀", "é-\nÉ", "ﬁ-\nﬂ", "word-\n", "-\nword", "a\u{00AD}\nb",
        "a\u{2010}\u{2003}\nb", "a-\u{00A0}b", "don’t “quote” — x–y", "na\u{00AD}tion\u{00AD}\u{00AD}al \u{00AD}",
        "  lead and trail  ", "UPPER lower MiXeD", "\u{FDFA}\u{FDFA}",
        String(repeating: "\u{FDFA}", count: 40), String(repeating: "ab-\ncd ", count: 30),
    ])
    func readsAsTheReference(text: String) {
        expectEqualToReference(text)
    }

    @Test func typographyFoldsAsAKeyboardTypesIt() {
        #expect(folded("Don’t “Quote” — 1990–2000 e\u{2010}mail") == "don't \"quote\" - 1990-2000 e-mail")
        #expect(indexedWords(of: "na\u{00AD}tion\u{00AD}al") == "national", "a soft hyphen joins")
        #expect(indexedWords(of: "don’t") == indexedWords(of: "don't"))
        #expect(parseQuery("“quick brown” fox „lazy dog“") == ["quick brown", "fox", "lazy dog"])
    }

    @Test func randomTextsReadAsTheReference() {
        var generator = SeededRandom(seed: 0x6D61_7267_696E)
        for round in 0..<3_000 {
            let length = round < 2_000 ? Int(generator.next() % 40) : Int(generator.next() % 600)
            var text = ""
            for _ in 0..<length {
                text += Self.alphabet[Int(generator.next() % UInt64(Self.alphabet.count))]
            }
            expectEqualToReference(text)
        }
    }

    /// `foldedMatchCount` (which reads plain ASCII pages without a `SearchableText`) counts what
    /// `foldedMatches` finds, and `foldedText(_:containsAll:)` agrees: random texts, mostly ASCII
    /// (capitals, every white space, hyphens before and away from line ends, controls), some with
    /// any scalar of the alphabet above; terms cut from their folded text (so most are found),
    /// with spaces, and made up.
    @Test func matchCountsWithoutSearchableTextEqualItsMatches() {
        let ascii = [
            "a", "b", "A", "B", "t", "T", "h", "e", " ", "  ", "\n", "\r", "\t", "\u{0B}", "\u{0C}", "-", "-\n", ".",
            "7", "\u{01}", "\u{7F}",
        ]
        var generator = SeededRandom(seed: 0x636F_756E_74)
        var checked = 0
        var found = 0
        for round in 0..<4_000 {
            let alphabet = round % 4 == 3 ? ascii + Self.alphabet : ascii.filter { $0 != "-\n" || round % 2 == 0 }
            var text = ""
            for _ in 0..<Int(generator.next() % 80) {
                text += alphabet[Int(generator.next() % UInt64(alphabet.count))]
            }
            let folded = SearchableText(text).folded
            var terms: [[Unicode.Scalar]] = [
                [], [" "], Array("ab".unicodeScalars), Array("a b".unicodeScalars),
                Array("A".unicodeScalars), Array("é".unicodeScalars), Array("a  b".unicodeScalars),
                Array("\t".unicodeScalars),
            ]
            for _ in 0..<6 where !folded.isEmpty {
                let start = Int(generator.next() % UInt64(folded.count))
                let end = min(folded.count, start + 1 + Int(generator.next() % 6))
                // A line break in the folded text only sets apart the copies of hyphenated line
                // ends; a folded term never holds one.
                terms.append(Array(folded[start..<end]).filter { $0 != "\n" })
            }
            for term in terms {
                let expected = SearchableText(text).foldedMatches(term, wholeWord: false).count
                let count = foldedMatchCount(text, of: term)
                #expect(count == expected, "\(term) in \(text.debugDescription)")
                #expect(foldedMatchCount(text, of: term, upTo: 1) == min(1, expected))
                #expect(
                    foldedText(text, containsAll: [term, Array("a".unicodeScalars)])
                        == (expected > 0
                            && SearchableText(text).foldedMatches(Array("a".unicodeScalars), wholeWord: false).count > 0)
                )
                checked += 1
                if expected > 0 { found += 1 }
            }
        }
        #expect(checked > 30_000 && found > 10_000, "\(checked) terms, \(found) found")
    }

    /// `PlainText` answers as `SearchableText` does on every plain ASCII text (and declines the
    /// rest): matches folded and cased, whole words or not, first only or all, and snippets of
    /// every width around each match; random texts, terms cut from them and made up.
    @Test func plainTextAnswersAsSearchableText() {
        let ascii = [
            "a", "b", "A", "B", "t", "T", "h", "e", "_", "9", " ", " ", "  ", "\n", "\r", "\t", "\u{0B}", "\u{0C}", "-",
            "-\n", ".", "\u{01}", "\u{7F}", "é",
        ]
        var generator = SeededRandom(seed: 0x706C_6169_6E)
        var plainTexts = 0
        var matched = 0
        for round in 0..<3_000 {
            // One text in five may hold what isn't plain: a scalar past ASCII, a hyphen at a line end.
            let alphabet = round % 5 == 0 ? ascii : ascii.filter { $0 != "é" && $0 != "-\n" }
            var text = ""
            for _ in 0..<Int(generator.next() % 160) {
                text += alphabet[Int(generator.next() % UInt64(alphabet.count))]
            }
            let searchable = SearchableText(text)
            guard let plain = PlainText(text) else {
                let bytes = Array(text.utf8)
                let hyphenAtLineEnd = bytes.indices.contains { index in
                    guard bytes[index] == 0x2D else { return false }
                    let spaces = bytes[(index + 1)...].prefix { [0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D].contains($0) }
                    return spaces.contains(0x0A) || spaces.contains(0x0D)
                }
                #expect(bytes.contains { $0 >= 0x80 } || hyphenAtLineEnd, "\(text.debugDescription)")
                continue
            }
            plainTexts += 1
            var terms: [[Unicode.Scalar]] = [[], Array("ab".unicodeScalars), Array("A".unicodeScalars), [" "]]
            for source in [searchable.folded, searchable.cased] where !source.isEmpty {
                for _ in 0..<3 {
                    let start = Int(generator.next() % UInt64(source.count))
                    terms.append(Array(source[start..<min(source.count, start + 1 + Int(generator.next() % 5))]))
                }
            }
            // Several terms' matches marked at once: the same from both.
            let each = terms.map { searchable.foldedMatches($0, wholeWord: false) }
            for width in [0, 3, 60] {
                #expect(
                    plain.snippet(marking: each, width: width, open: "[", close: "]")
                        == searchable.snippet(marking: each, width: width, open: "[", close: "]"),
                    "\(text.debugDescription)")
            }
            for term in terms {
                for wholeWord in [false, true] {
                    for first in [false, true] {
                        let folded = searchable.foldedMatches(term, wholeWord: wholeWord, first: first)
                        #expect(plain.foldedMatches(term, wholeWord: wholeWord, first: first) == folded)
                        #expect(
                            plain.casedMatches(term, wholeWord: wholeWord, first: first)
                                == searchable.casedMatches(term, wholeWord: wholeWord, first: first))
                        for range in folded {
                            matched += 1
                            for width in [0, 3, 60] {
                                #expect(
                                    plain.snippet(around: range, width: width, open: "[", close: "]")
                                        == searchable.snippet(around: range, width: width, open: "[", close: "]"),
                                    "\(text.debugDescription)")
                            }
                        }
                    }
                }
            }
        }
        #expect(plainTexts > 1_000 && matched > 20_000, "\(plainTexts) plain texts, \(matched) matches")
    }

    @Test func matchesAndSnippetsAcrossAJoinedLineEnd() {
        let text = SearchableText("An appli-\ncative-order evaluation of Co-\nOperation")
        #expect(text.foldedMatches(foldedTerm("applicative"), wholeWord: false).count == 1)
        #expect(text.foldedMatches(foldedTerm("appli-cative"), wholeWord: false).count == 1)
        #expect(text.foldedMatches(foldedTerm("cooperation"), wholeWord: true).count == 1)
        let match = text.foldedMatches(foldedTerm("order"), wholeWord: true)
        #expect(match.count == 1)
        #expect(
            text.snippet(around: match[0], open: "[", close: "]") == "An applicative-[order] evaluation of CoOperation")
    }

    /// Chinese and Japanese: a run of their letters is held as its pairs (one alone as itself),
    /// apart from the words of other scripts beside it and split at their punctuation; a term's
    /// letters are open only where one stands alone at its end; kana keep their voicing marks;
    /// and every letter is a word's edge, so a match inside a run is a whole word.
    @Test func chineseAndJapaneseAreHeldAsPairsOfLetters() {
        #expect(indexWords("東京タワーは".unicodeScalars) == ["東京", "京タ", "タワ", "ワー", "ーは"])
        #expect(indexWords("a東b".unicodeScalars) == ["a", "東", "b"])
        #expect(indexWords("unicode文字列 x".unicodeScalars) == ["unicode", "文字", "字列", "x"])
        #expect(indexWords("東京・大阪、京都。".unicodeScalars) == ["東京", "大阪", "京都"])
        #expect(indexWords("한국어 text".unicodeScalars) == ["한국어", "text"])
        let whole = TermWords("東京タワー".unicodeScalars)
        #expect(whole.words == ["東京", "京タ", "タワ", "ワー"] && !whole.openStart && !whole.openEnd)
        let alone = TermWords("京".unicodeScalars)
        #expect(alone.words == ["京"] && alone.openStart && alone.openEnd)
        let mixed = TermWords("tower東".unicodeScalars)
        #expect(mixed.words == ["tower", "東"] && mixed.openStart && mixed.openEnd)
        #expect(!TermWords("東京 tower".unicodeScalars).openStart)
        #expect(foldedTerm("が") != foldedTerm("か"))
        #expect(foldedTerm("ガッコウ") == Array("ガッコウ".unicodeScalars))
        #expect(foldedTerm("Café") == foldedTerm("cafe"))
        let text = SearchableText("東京タワーは東京にある。 Tokyo's tower")
        #expect(text.foldedMatches(foldedTerm("東京"), wholeWord: true).count == 2)
        #expect(text.foldedMatches(foldedTerm("タワー"), wholeWord: true).count == 1)
        #expect(text.foldedMatches(foldedTerm("tow"), wholeWord: true).isEmpty)
        #expect(text.foldedMatches(foldedTerm("tokyo"), wholeWord: true).count == 1)
        #expect(SearchableText("がっこうとかっこう").foldedMatches(foldedTerm("がっこう"), wholeWord: false).count == 1)
    }

    /// A voicing mark written apart from its kana — half-width (ｶﾞ) or combining (カ and U+3099,
    /// as decomposed text has it) — folds into the voiced letter, as typed (ガ); a match covers
    /// the mark; a mark no letter takes is left as before.
    @Test func voicingMarksWrittenApartFoldIntoTheirLetters() {
        #expect(folded("ｶﾞｽ") == folded("ガス") && folded("ｶﾞｽ") != folded("カス"))
        #expect(folded("ﾊﾟﾝとﾊﾞｽ") == folded("パンとバス"))
        #expect(folded("ハ\u{309A}ン") == folded("パン") && folded("か\u{3099}") == folded("が"))
        #expect(folded("ｶｽ") == folded("カス"))
        #expect(folded("ン\u{3099}") == "ン\u{3099}")
        let text = SearchableText("これはｶﾞｽです")
        let matches = text.foldedMatches(foldedTerm("ガ"), wholeWord: false)
        #expect(matches.count == 1)
        #expect(matches.first.map { String(String.UnicodeScalarView(text.cased[$0])) } == "ｶﾞ")
        #expect(text.foldedMatches(foldedTerm("ガス"), wholeWord: false).map(\.count) == [3])
        #expect(SearchableText("cafe\u{301} au lait").foldedMatches(foldedTerm("cafe"), wholeWord: true) == [0..<5])
    }

    /// A word broken by a hyphen at a line end is shown joined, and with its hyphen where it is
    /// a compound: a capital after the break, the pieces hyphenated elsewhere on the page, or a
    /// match of a hyphenated term across it; the hyphen stands outside a mark ending or
    /// beginning there.
    @Test func snippetsShowACompoundBrokenAtALineEndWithItsHyphen() {
        func snippet(_ text: SearchableText, _ term: String, hyphenated: Bool = false) -> String {
            text.snippet(
                marking: [text.foldedMatches(foldedTerm(term), wholeWord: false)], width: 200, open: "[", close: "]",
                hyphenated: hyphenated)
        }
        let text = SearchableText("The com-\nputer runs applicative-\norder code; Anglo-\nSaxon co-\noperation")
        #expect(snippet(text, "computer") == "The [computer] runs applicativeorder code; Anglo-Saxon cooperation")
        #expect(
            snippet(text, "applicative-order", hyphenated: true)
                == "The computer runs [applicative-order] code; Anglo-Saxon cooperation")
        #expect(
            snippet(text, "applicativeorder") == "The computer runs [applicativeorder] code; Anglo-Saxon cooperation")
        #expect(snippet(text, "anglo") == "The computer runs applicativeorder code; [Anglo]-Saxon cooperation")
        let twice = SearchableText("An applicative-\norder evaluation, as applicative-order is.")
        #expect(snippet(twice, "evaluation") == "An applicative-order [evaluation], as applicative-order is.")
        #expect(snippet(twice, "order") == "An applicative-[order] evaluation, as applicative-[order] is.")
        #expect(snippet(twice, "applicative") == "An [applicative]-order evaluation, as [applicative]-order is.")
    }

    /// A snippet goes where the most terms are together and marks every match in it; with one
    /// match it is the snippet around that match.
    @Test func snippetsMarkEveryTermWhereTheyAreTogether() {
        let filler = String(repeating: "filler words here ", count: 12)
        let text = SearchableText("Alpha starts. " + filler + "then gamma, alpha and gamma again. " + filler + "alpha.")
        let terms = ["alpha", "gamma"].map { text.foldedMatches(foldedTerm($0), wholeWord: false) }
        let snippet = text.snippet(marking: terms, width: 20, open: "[", close: "]")
        #expect(snippet == "…words here then [gamma], [alpha] and [gamma] again. filler…", "\(snippet)")
        let one = text.foldedMatches(foldedTerm("starts"), wholeWord: false)
        #expect(
            text.snippet(marking: [one], width: 20, open: "[", close: "]")
                == text.snippet(around: one[0], width: 20, open: "[", close: "]"))
        #expect(text.snippet(marking: [[]], width: 20, open: "[", close: "]").isEmpty)
        // Overlapping matches are one mark.
        let overlap = SearchableText("a banana split")
        let pieces = ["ana", "nan"].map { overlap.foldedMatches(foldedTerm($0), wholeWord: false) }
        #expect(overlap.snippet(marking: pieces, width: 60, open: "[", close: "]") == "a b[anan]a split")
    }

    private func expectEqualToReference(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let fast = SearchableText(text)
        let reference = ReferenceText(text)
        #expect(fast.cased == reference.cased, "cased of \(text.debugDescription)", sourceLocation: sourceLocation)
        #expect(fast.folded == reference.folded, "folded of \(text.debugDescription)", sourceLocation: sourceLocation)
        #expect(fast.origin == reference.origin, "origin of \(text.debugDescription)", sourceLocation: sourceLocation)
        #expect(fast.raw == reference.raw, "raw of \(text.debugDescription)", sourceLocation: sourceLocation)
    }
}

/// The reading `SearchableText` must equal, scalar by scalar with `Array.append`, as it was
/// written first: joins of words hyphenated at a line end, runs of white space as one space,
/// the folded copy (lowercase, no accents, compatibility forms) with where each scalar came from,
/// and each joined word written again with its hyphen after the page.
private struct ReferenceText {
    var cased = [Unicode.Scalar]()
    var folded = [Unicode.Scalar]()
    var origin = [Int32]()
    var raw = [Int32]()

    init(_ text: String) {
        let scalars = Array(text.unicodeScalars)
        var joins = [Int]()
        var spaceAt = 0
        var index = 0
        var pendingSpace = false
        while index < scalars.count {
            let scalar = scalars[index]
            if Self.isHyphen(scalar), let next = Self.joinedLineBreak(scalars, after: index), let last = cased.last,
                Self.isLetter(last), next < scalars.count, Self.isLetter(scalars[next])
            {
                joins.append(cased.count)
                index = next
                continue
            }
            if Self.isSpace(scalar) {
                if !pendingSpace { spaceAt = index }
                pendingSpace = !cased.isEmpty
                index += 1
                continue
            }
            if pendingSpace {
                cased.append(" ")
                raw.append(Int32(spaceAt))
                folded.append(" ")
                origin.append(Int32(cased.count - 1))
                pendingSpace = false
            }
            cased.append(scalar)
            raw.append(Int32(index))
            appendFolded(scalar, position: Int32(cased.count - 1))
            index += 1
        }
        for join in joins {
            var start = join
            var words = 0
            while start > 0, words < 4 {
                if cased[start - 1] == " " { words += 1 }
                if words < 4 { start -= 1 }
            }
            var end = join
            words = 0
            while end < cased.count, words < 4 {
                if cased[end] == " " { words += 1 }
                if words < 4 { end += 1 }
            }
            folded.append("\n")
            origin.append(Int32(start))
            for position in start..<end {
                if position == join {
                    folded.append("-")
                    origin.append(Int32(max(0, join - 1)))
                }
                appendFolded(cased[position], position: Int32(position))
            }
        }
    }

    private mutating func appendFolded(_ scalar: Unicode.Scalar, position: Int32) {
        if scalar.value < 0x80 {
            folded.append(Unicode.Scalar(UInt8(scalar.value)).properties.lowercaseMapping.unicodeScalars.first!)
            origin.append(position)
            return
        }
        // Typography as a keyboard types it: curly quotes straight, every dash a hyphen-minus, the
        // soft hyphen gone.
        let typographic: [Unicode.Scalar]? =
            switch scalar {
            case "‘", "’", "‚", "‛": ["'"]
            case "“", "”", "„", "‟": ["\""]
            case "‐", "‑", "‒", "–", "—", "―", "−": ["-"]
            case "\u{00AD}": []
            default: nil
            }
        let decomposed = String(scalar).decomposedStringWithCompatibilityMapping.lowercased()
        let kept = decomposed.unicodeScalars.filter { $0.properties.generalCategory != .nonspacingMark }
        // Kana as they are: their voicing marks are letters' own (が, ga, is not か, ka).
        let kana: [Unicode.Scalar]? = ("\u{3041}"..."\u{30FF}").contains(scalar) ? [scalar] : nil
        for foldedScalar in typographic ?? kana ?? (kept.isEmpty ? [scalar] : Array(kept)) {
            folded.append(foldedScalar)
            origin.append(position)
        }
    }

    private static func isHyphen(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "-" || scalar == "\u{00AD}" || scalar == "\u{2010}"
    }

    private static func joinedLineBreak(_ scalars: [Unicode.Scalar], after index: Int) -> Int? {
        var next = index + 1
        var sawBreak = false
        while next < scalars.count, isSpace(scalars[next]) {
            if scalars[next] == "\n" || scalars[next] == "\r" { sawBreak = true }
            next += 1
        }
        return sawBreak ? next : nil
    }

    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x80
            ? (scalar == " " || scalar == "\n" || scalar == "\t" || scalar == "\r" || scalar == "\u{0C}"
                || scalar == "\u{0B}") : scalar.properties.isWhitespace
    }

    private static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x80
            ? ((scalar.value | 0x20) >= 0x61 && (scalar.value | 0x20) <= 0x7a) : scalar.properties.isAlphabetic
    }
}
