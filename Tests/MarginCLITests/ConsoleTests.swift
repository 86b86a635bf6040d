import TestSupport
import Testing

@testable import MarginCLI

/// `appendTerminalSafe` copies the runs between control characters whole; these tests hold it to
/// the byte-by-byte reading it replaced, on random UTF-8 made of the bytes the rules tell apart.
@Suite struct ConsoleTests {
    /// The reference: C0 controls but line feeds and tabs, DEL and C1 controls (0xC2 0x80…0x9F)
    /// removed unless kept.
    static func reference(_ bytes: [UInt8], keep: [Unicode.Scalar]) -> [UInt8] {
        var result = [UInt8]()
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x20 || byte == 0x7F {
                if byte == 0x0A || byte == 0x09 || keep.contains(Unicode.Scalar(byte)) { result.append(byte) }
                index += 1
            } else if byte == 0xC2, index + 1 < bytes.count, bytes[index + 1] >= 0x80, bytes[index + 1] <= 0x9F {
                if keep.contains(Unicode.Scalar(bytes[index + 1])) { result += [byte, bytes[index + 1]] }
                index += 2
            } else {
                result.append(byte)
                index += 1
            }
        }
        return result
    }

    static let pieces: [[UInt8]] = [
        [0x61], [0x20], [0x0A], [0x09], [0x0D], [0x1B], [0x07], [0x00], [0x7F], [0xC2, 0x85], [0xC2, 0x9F],
        [0xC2, 0xA0], [0xC3, 0xA9], [0xE2, 0x80, 0xA8], [0xF0, 0x9F, 0x98, 0x80], [0x5B], [0x22],
    ]

    @Test func controlsAreRemovedAsByTheReference() {
        var generator = SeededRandom(seed: 0x7474_79)
        for round in 0..<2_000 {
            let bytes = (0..<Int(generator.next() % 60)).flatMap { _ in
                Self.pieces[Int(generator.next() % UInt64(Self.pieces.count))]
            }
            let keep: [Unicode.Scalar] = round % 3 == 0 ? ["\r", "\u{85}"] : []
            var result = [UInt8]()
            appendTerminalSafe(bytes[...], to: &result, keep: keep)
            #expect(result == Self.reference(bytes, keep: keep), "round \(round): \(bytes)")
            if result != Self.reference(bytes, keep: keep) { break }
        }
    }

    @Test func aSliceIsReadFromItsOwnStart() {
        let bytes: [UInt8] = [0x1B, 0x61, 0x0A, 0x1B, 0x62, 0x7F]
        var result = [0x7A] as [UInt8]
        appendTerminalSafe(bytes[1...], to: &result)
        #expect(result == [0x7A, 0x61, 0x0A, 0x62])
    }
}
