import Foundation
import MarginCore
import Testing

@testable import MarginKit
@testable import MarginServe

/// `serve` writes its search hits with `PrettyJSON`, not the encoder: the same bytes.
@Suite struct SearchJSONTests {
    @Test func hitsWithTheirRangesAreWrittenAsTheEncoderWritesThem() throws {
        var state: UInt64 = 0x7365_7276
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let pieces = ["a", "Ω", "\"", "\\", "/", "\n", "\u{1}", "\u{7}", " ", "ﬁ", "é", "\t", "日本", "😀"]
        func text(_ upTo: UInt64) -> String {
            (0..<Int(next() % (upTo + 1))).map { _ in pieces[Int(next() % UInt64(pieces.count))] }.joined()
        }
        for round in 0..<200 {
            let found = (0..<Int(round % 7)).map { _ in
                var hit = SearchHit(
                    book: Int64(next() % 1_000), title: text(12), page: next() % 4 == 0 ? nil : Int(next() % 900) + 1,
                    marked: text(20) + SearchHit.markOpen + text(4) + SearchHit.markClose + text(20),
                    matches: Int(next() % 9))
                hit.pageLabel = next() % 3 == 0 ? nil : text(5)
                hit.matchKind = [nil, "word", "stem", "piece"][Int(next() % 4)]
                return hit
            }
            let hits = found.map(RangedHit.init)
            let expected = String(decoding: try ViewJSON.data(hits, pretty: false), as: UTF8.self)
            let written = RangedHit.json(hits).string
            #expect(written == expected, "round \(round)")
            if written != expected { break }
        }
    }
}
