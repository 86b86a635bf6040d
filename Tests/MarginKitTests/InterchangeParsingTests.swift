import Foundation
import MarginCore
import Testing

@testable import MarginKit

/// The readers of other tools' formats, on the corners their files have.
@Suite struct InterchangeParsingTests {
    func lua(_ text: String) throws -> LuaValue { try LuaLiteralReader.read(Data(text.utf8), name: "test.lua") }

    @Test func luaLiteralsAsKOReaderAndLuaWriteThem() throws {
        let value = try lua(
            """
            -- we can read Lua syntax here!
            return {
                ["a"] = "line one\\
            line two",
                ["b"] = 'single \\'quoted\\' \\65\\066 \\x43 \\u{e9} tab\\tend',
                ["c"] = [==[long ]] string]==],
                ["n"] = { 1, -2.5, 0x1F, 1e3, [10] = "ten" },
                ["t"] = true, f = false, z = nil;
                --[[ a block
                comment ]] ["after"] = 1,
            }
            """)
        #expect(value["a"] == .string("line one\nline two"))
        #expect(value["b"] == .string("single 'quoted' AB C é tab\tend"))
        #expect(value["c"] == .string("long ]] string"))
        #expect(value["n"]?.list.map(\.number) == [1, -2.5, 31, 1000, nil])
        #expect(value["n"]?.list.last == .string("ten"))
        #expect(value["t"] == .boolean(true) && value["f"] == .boolean(false) && value["z"] == .null)
        #expect(value["after"] == .number(1))
    }

    @Test(arguments: [
        ("return os.execute('x')", "'os' is code"), ("return { [\"a\"] = f() }", "'f' is code"),
        ("return { 1 + 2 }", "',' or '}' expected"), ("return { \"open", "a string never ends"),
        ("return {", "ends inside a table"), ("return { } x", "more after the table"),
        ("return { \"a\nb\" }", "a line ends inside a string"),
        ("return { 1e999 }", "is not a number"), ("return { \"\\400\" }", "past 255"),
    ])
    func codeOrBrokenLiteralsAreRefused(text: String, says: String) {
        #expect {
            try lua(text)
        } throws: { error in
            "\(error)".contains(says) || (error as? MarginError)?.localizedDescription.contains(says) == true
        }
    }

    @Test func koreaderChecksumIsItsPartialMD5() throws {
        // 1 KiB at 0 and at 1024 × 4^i: a 5,000-byte file gives the samples at 0, 1024 and 4096.
        let path = NSTemporaryDirectory() + "margin-md5-\(UUID().uuidString)"
        let bytes = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let samples = Data(bytes[0..<1024] + bytes[1024..<2048] + bytes[4096..<5000])
        let expected = try runMD5(samples)
        #expect(koreaderPartialMD5(path) == expected)
    }

    /// `md5sum` of some bytes: the reference the checksum is held to.
    func runMD5(_ data: Data) throws -> String {
        let path = NSTemporaryDirectory() + "margin-md5-in-\(UUID().uuidString)"
        try data.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/md5sum")
        process.arguments = [path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(32))
    }

    @Test func zoteroNotesBecomeMarkdown() throws {
        let note = try markdown(
            fromHTML:
                "<div data-schema-version=\"9\"><h2>Title</h2><p>One <em>two</em><br>three &amp; four</p>"
                + "<ol><li>a</li><li>b</li></ol><blockquote><p>quoted</p></blockquote><p>x<code>y</code></p></div>")
        #expect(note == "## Title\n\nOne *two*\nthree & four\n\n1. a\n2. b\n\n> quoted\n\nx`y`", "\(note)")
        #expect(zoteroYear("2019-05-14 2019-05-14") == 2019)
        #expect(zoteroYear("0000-00-00 spring 2020") == 2020)
        #expect(zoteroYear("0000-00-00 undated") == nil)
        #expect(zoteroExtra("PMID: 1\nCitation Key: key2020\nnot a pair")["citation key"] == "key2020")
    }
}
