import Foundation
import TestSupport
import Testing

@testable import MarginCore
@testable import MarginKit

/// `list --json` writes its books with `PrettyJSON`, not the encoder: these tests hold the bytes
/// to what `JSONEncoder` writes for the same books with Margin's options (and so to the contract's
/// shape, which `BookInfo.encode(to:)` defines).
@Suite struct BookJSONTests {
    /// Strings the writer treats differently: quotes, backslashes, every control character, DEL,
    /// slashes (not escaped), line separators, accents, CJK, an emoji, and nothing at all.
    static let pieces: [String] =
        [
            "a", "Z", "7", " ", "\"", "\\", "/", "\u{7F}", "\u{85}", "\u{2028}", "é", "漢", "😀", "\u{FEFF}", "{", "]",
            ":", ",", "",
        ] + (0..<0x20).map { String(Unicode.Scalar(UInt8($0))) }

    static func encoded(_ books: [BookInfo]) throws -> String {
        // The one way views are written as JSON, which the fast writer must match.
        String(decoding: try ViewJSON.data(books), as: UTF8.self)
    }

    static func text(_ generator: inout SeededRandom, upTo length: UInt64) -> String {
        (0..<Int(generator.next() % (length + 1))).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }
            .joined()
    }

    static func optionalText(_ generator: inout SeededRandom) -> String? {
        generator.next() % 3 == 0 ? nil : text(&generator, upTo: 12)
    }

    static func date(_ generator: inout SeededRandom) -> Date {
        // 1970 to 2100, to the microsecond (stored dates carry milliseconds and a remainder).
        Date(timeIntervalSince1970: Double(generator.next() % 4_102_444_800_000_000) / 1_000_000)
    }

    static func book(_ generator: inout SeededRandom, id: Int64) -> BookInfo {
        var book = Book(
            sha256: String(repeating: "0123456789abcdef", count: 4), title: text(&generator, upTo: 30),
            author: optionalText(&generator), pages: Int(generator.next() % 5_000),
            bytes: Int64(bitPattern: generator.next()) >> Int64(generator.next() % 64),
            folder: optionalText(&generator), password: generator.next() % 4 == 0 ? "sealed" : nil,
            now: date(&generator), uuid: UUID())
        book.id = generator.next() % 10 == 0 ? nil : id
        book.memo = optionalText(&generator)
        book.updatedAt = date(&generator)
        book.openedAt = generator.next() % 2 == 0 ? nil : date(&generator)
        book.indexedAt = generator.next() % 2 == 0 ? nil : date(&generator)
        book.textlessPages = Int(generator.next() % 7)
        book.ocrPages = Int(generator.next() % 5)
        book.ocrConfidence =
            generator.next() % 3 == 0
            ? nil : Double(generator.next() % 1_001) / 10 + (generator.next() % 2 == 0 ? 0 : 0.04)
        book.addedBy = optionalText(&generator)
        book.doi = optionalText(&generator)
        book.arxiv = optionalText(&generator)
        book.year = generator.next() % 3 == 0 ? nil : Int(generator.next() % 4_000) - 1_000
        book.citationKey = optionalText(&generator)
        book.venue = optionalText(&generator)
        book.publisher = optionalText(&generator)
        book.lang = optionalText(&generator)
        let lists = (0..<2).map { _ in (0..<Int(generator.next() % 4)).map { _ in text(&generator, upTo: 20) } }
        let cached = generator.next() % 2 == 0
        return BookInfo(
            book: book, sources: lists[0], tags: lists[1], cached: cached,
            file: cached ? "/cache/pdfs/ab/" + text(&generator, upTo: 8) + ".pdf" : nil)
    }

    @Test func noBooksAreWrittenAsTheEncoderWritesThem() throws {
        #expect(BookInfo.json([]).string == (try Self.encoded([])))
    }

    @Test func randomBooksAreWrittenAsTheEncoderWritesThem() throws {
        var generator = SeededRandom(seed: 0x6A73_6F6E)
        for round in 0..<300 {
            let books = (0..<(round % 5)).map { Self.book(&generator, id: Int64(round * 10 + $0)) }
            let written = BookInfo.json(books).string
            let expected = try Self.encoded(books)
            #expect(written == expected, "round \(round)")
            if written != expected { break }
        }
    }

    @Test func randomSearchHitsAreWrittenAsTheEncoderWritesThem() throws {
        var generator = SeededRandom(seed: 0x6869_7473)
        for round in 0..<300 {
            let hits = (0..<(round % 6)).map { _ in
                var hit = SearchHit(
                    book: Int64(generator.next() % 1_000), title: Self.text(&generator, upTo: 20),
                    page: generator.next() % 4 == 0 ? nil : Int(generator.next() % 900) + 1,
                    marked: Self.text(&generator, upTo: 40) + SearchHit.markOpen + "w" + SearchHit.markClose,
                    matches: Int(generator.next() % 9), kind: generator.next() % 3 == 0 ? "memo" : nil)
                hit.pageLabel = Self.optionalText(&generator)
                hit.annotation = generator.next() % 3 == 0 ? Int64(generator.next() % 5_000) : nil
                hit.matchKind = [nil, "word", "piece"][Int(generator.next() % 3)]
                return hit
            }
            let expected = String(decoding: try ViewJSON.data(hits), as: UTF8.self)
            let written = PrettyJSON.array(hits, bytesEach: 0) { $1.write(to: &$0) }.string
            #expect(written == expected, "round \(round)")
            // And compact, as `serve` answers.
            let compact = String(decoding: try ViewJSON.data(hits, pretty: false), as: UTF8.self)
            let writtenCompact = PrettyJSON.array(hits, bytesEach: 0, compact: true) { $1.write(to: &$0) }.string
            #expect(writtenCompact == compact, "round \(round)")
            if written != expected || writtenCompact != compact { break }
        }
    }

    /// Arrays nested deeper than the writer's run of spaces, some empty.
    @Test func deepNestingIsIndentedAsTheEncoderIndentsIt() throws {
        indirect enum Nest: Encodable {
            case leaf(String)
            case list([Nest])

            func encode(to encoder: any Encoder) throws {
                switch self {
                case .leaf(let text):
                    var container = encoder.singleValueContainer()
                    try container.encode(text)
                case .list(let items):
                    var container = encoder.unkeyedContainer()
                    for item in items { try container.encode(item) }
                }
            }

            func write(to json: inout PrettyJSON) {
                switch self {
                case .leaf(let text): json.string(text)
                case .list(let items):
                    json.beginArray()
                    for item in items {
                        json.element()
                        item.write(to: &json)
                    }
                    json.endArray()
                }
            }
        }
        var nest = Nest.list([])
        for level in 0..<45 { nest = .list(level % 3 == 0 ? [.leaf("\(level)"), nest, .list([])] : [nest]) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var json = PrettyJSON()
        nest.write(to: &json)
        #expect(json.string == String(decoding: try encoder.encode(nest), as: UTF8.self))
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var compact = PrettyJSON(compact: true)
        nest.write(to: &compact)
        #expect(compact.string == String(decoding: try encoder.encode(nest), as: UTF8.self))
    }

    @Test func everyFieldOfTheContractIsWritten() throws {
        var generator = SeededRandom(seed: 7)
        let written = BookInfo.json([Self.book(&generator, id: 1)]).bytes
        let object = try #require(try JSONSerialization.jsonObject(with: Data(written)) as? [[String: Any]]).first
        #expect(
            Set(try #require(object).keys)
                == [
                    "id", "uuid", "title", "author", "pages", "sha256", "bytes", "sources", "folder", "tags", "memo",
                    "addedAt", "updatedAt", "openedAt", "cached", "file", "encrypted", "textlessPages", "indexed",
                    "addedBy", "doi", "arxiv", "year", "citationKey", "venue", "publisher", "workType", "ocrPages",
                    "ocrConfidence", "lang",
                ])
    }
}

/// `isoDate` writes dates from 1970 to 2099 itself; these hold it to Foundation's ISO 8601 style.
@Suite struct ISODateTests {
    static func reference(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000 + 0.001).rounded(.down)
        let exact = Date(timeIntervalSince1970: milliseconds / 1000 + 0.000_000_5)
        return exact.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    @Test(arguments: [
        0, 0.000_4, 0.999_9, 59.999, 86_399.999, 86_400, 951_782_400, 951_868_799.5, 4_102_444_799.999, 4_102_444_800,
        4_107_542_400,
        1_764_000_000.123_4, 1_795_000_000.999_999, 253_402_300_799.999, 253_402_300_800, -1, -0.5, -62_135_596_800,
        -12_219_292_800,
    ])
    func aDateIsWrittenAsFoundationWritesIt(seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(isoDate(date) == Self.reference(date))
    }

    @Test func randomDatesAreWrittenAsFoundationWritesThem() {
        var generator = SeededRandom(seed: 0x6973_6F)
        for round in 0..<20_000 {
            // Up to 2100 to the microsecond (past it Foundation writes them), then to the second.
            let seconds =
                round < 10_000
                ? Double(generator.next() % 4_102_444_800_000_000) / 1_000_000
                : Double(generator.next() % 253_402_300_800)
            let date = Date(timeIntervalSince1970: seconds)
            #expect(isoDate(date) == Self.reference(date), "\(seconds)")
            if isoDate(date) != Self.reference(date) { break }
        }
    }
}

@Suite struct UUIDStringTests {
    @Test func aUUIDIsWrittenAsFoundationWritesIt() {
        var generator = SeededRandom(seed: 0x7575_6964)
        for _ in 0..<2_000 {
            let uuid = UUID(
                uuid: withUnsafeBytes(of: (generator.next(), generator.next())) { $0.load(as: uuid_t.self) })
            #expect(lowercasedString(of: uuid) == uuid.uuidString.lowercased())
        }
        for uuid in [UUID(), UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))] {
            #expect(lowercasedString(of: uuid) == uuid.uuidString.lowercased())
        }
    }
}

/// A guide from a store's row (its labels and outline as JSON text) is the guide from JSON with
/// arrays; each text is decoded once a process, and a changed text is decoded anew.
@Suite struct GuideDecodingTests {
    func guide(_ json: String) throws -> BookGuide {
        try JSONDecoder().decode(BookGuide.self, from: Data(json.utf8))
    }

    @Test func aStoresTextsGiveTheGuideTheirArraysGive() throws {
        let labels = #"["i","ii","1","2","A-1"]"#
        let outline = #"[{"title":"Preface","page":1,"level":1},{"title":"1.2 Scope","page":4,"level":2}]"#
        func quoted(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        let fromArrays = try guide(#"{"bookId": 7, "labels": \#(labels), "outline": \#(outline)}"#)
        let fromTexts = try guide(
            #"{"id": 3, "bookId": 7, "labels": \#(quoted(labels)), "outline": \#(quoted(outline))}"#)
        #expect(fromTexts.labels == ["i", "ii", "1", "2", "A-1"] && fromTexts.outline.count == 2)
        #expect(fromTexts.labels == fromArrays.labels && fromTexts.outline == fromArrays.outline)
        #expect(fromTexts.id == 3 && fromTexts.chapter(of: 5) == "1.2 Scope" && fromTexts.label(of: 5) == "A-1")
        // Read again: the same values, from the texts kept (other tests of this process may keep
        // theirs meanwhile: the count is not this test's).
        #expect(BookGuide.labelTexts.holds(labels))
        #expect(try guide(#"{"bookId": 7, "labels": \#(quoted(labels)), "outline": "[]"}"#).labels == fromTexts.labels)
        // A book read again with other labels (a text no other test reads): those, kept too.
        let other = #"["x","\#(UUID().uuidString)"]"#
        #expect(!BookGuide.labelTexts.holds(other))
        let changed = try guide(#"{"bookId": 7, "labels": \#(quoted(other)), "outline": "[]"}"#)
        #expect(changed.labels?.first == "x" && changed.labels?.count == 2 && BookGuide.labelTexts.holds(other))
        // Texts of the same length told apart by their bytes (the cache's keys are bytes).
        for label in ["é", "è", "e\u{301}"] {
            let read = try guide(#"{"bookId": 7, "labels": \#(quoted("[\"\(label)\"]")), "outline": "[]"}"#)
            #expect(read.labels == [label])
        }
        // No labels: none, whichever way.
        #expect(try guide(#"{"bookId": 7, "labels": null, "outline": "[]"}"#).labels == nil)
        #expect(try guide(#"{"bookId": 7, "outline": []}"#).labels == nil)
        // Labels stored damaged (not JSON): read without them (its pages shown by number), not
        // refused; a damaged outline is refused.
        #expect(try guide(#"{"bookId": 7, "labels": "[not json", "outline": "[]"}"#).labels == nil)
        #expect(throws: (any Error).self) { try guide(#"{"bookId": 7, "labels": null, "outline": "[not json"}"#) }
    }
}
