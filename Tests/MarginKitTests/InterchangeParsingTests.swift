import Foundation
import MarginCore
import TestSupport
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

    /// The reader is a strict parser of what real Lua reads as data, tied to Lua 5.4 itself:
    /// every file real Lua loads (in an empty environment, no library to call) as a table, the
    /// reader reads as the same table, and what margin writes Lua reads back as written.
    @Test(Prerequisite.needs(Self.realLua != nil, "needs lua5.4 (scripts/install-deps.sh --test installs it)"))
    func theReaderReadsWhatLua54Reads() throws {
        let folder = NSTemporaryDirectory() + "margin-lua-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let made = try runProcess("/usr/bin/env", ["python3", Fixtures.root + "/fixtures/make-koreader.py", folder])
        #expect(made.status == 0, "\(made.stderr)")
        var files = [String]()
        let walk = FileManager.default.enumerator(atPath: folder)
        while let file = walk?.nextObject() as? String {
            if file.hasSuffix(".lua") && !file.hasPrefix("hostile/") { files.append(folder + "/" + file) }
        }
        #expect(files.count == 3, "the fixture's three sidecars: \(files)")
        // Written by margin: every byte that needs escaping, non-Latin text, numbers and nesting.
        let written = LuaValue.table([
            (.string("text"), .string("line one\nline \"two\" \\ back\ttab \u{1}\u{7f} é 日本語 ﬁ")),
            (
                .string("n"),
                .table([(.number(1), .number(-2.5)), (.number(2), .number(1e-7)), (.number(3), .number(42))])
            ),
            (.string("nested"), .table([(.string("yes"), .boolean(true)), (.string("no"), .boolean(false))])),
            (.number(7), .string("")),
        ])
        let own = folder + "/written.lua"
        try ("return " + written.literal() + "\n").write(toFile: own, atomically: true, encoding: .utf8)
        let corners = folder + "/corners.lua"
        try """
        -- a comment
        return {
            ["a"] = "line one\\
        line two", ['b'] = 'single \\'quoted\\' \\65\\066 \\x43 \\u{e9}\\z
                  tab\\tend', c = [==[long ]] string]==],
            n = { 1, -2.5, 0x1F, 1e3, [10] = "ten", 0xA.8p1 }; t = true, f = false, z = nil,
            --[[ block ]] [1.5] = "a float key", [-3] = 'minus',
        }
        """.write(toFile: corners, atomically: true, encoding: .utf8)
        let dump = folder + "/dump.lua"
        try Self.canonicalDump.write(toFile: dump, atomically: true, encoding: .utf8)
        for file in files + [own, corners] {
            let lua = try runProcess(Self.realLua!, [dump, file])
            #expect(lua.status == 0, "\(file): \(lua.stderr)")
            let mine = try LuaLiteralReader.read(Data(contentsOf: URL(fileURLWithPath: file)), name: file)
            #expect(mine.canonical == lua.stdout, "\(file):\nmargin: \(mine.canonical)\nlua:    \(lua.stdout)")
        }
        #expect(try LuaLiteralReader.read(Data(contentsOf: URL(fileURLWithPath: own)), name: own) == written)
    }

    static let realLua: String? = ["/usr/bin/lua5.4", "/usr/local/bin/lua5.4"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Loads the file named by `arg[1]` as text in an empty environment, runs it (a literal
    /// does nothing but build its table) and writes the value in `LuaValue.canonical`'s form.
    static let canonicalDump = #"""
        local function canon(v)
          local t = type(v)
          if t == "table" then
            local keys = {}
            for k in pairs(v) do keys[#keys + 1] = { canon(k), k } end
            table.sort(keys, function(a, b) return a[1] < b[1] end)
            local out = {}
            for _, k in ipairs(keys) do out[#out + 1] = k[1] .. "=" .. canon(v[k[2]]) end
            return "{" .. table.concat(out, ",") .. "}"
          elseif t == "string" then
            return "s" .. v:gsub(".", function(c) return string.format("%02x", c:byte()) end)
          elseif t == "number" then
            if v == math.floor(v) and math.abs(v) < 2^53 then return string.format("n%d", math.tointeger(v)) end
            return string.format("n%.17g", v)
          else
            return "b" .. tostring(v)
          end
        end
        local f = assert(io.open(arg[1], "rb"))
        local source = f:read("a")
        f:close()
        local chunk = assert(load(source, "=" .. arg[1], "t", {}))
        io.write(canon(chunk()))
        """#

    /// W3C documents come as one annotation, an array, a page or a collection whose pages
    /// follow one another (`first`, `next`); Hypothesis's API answers `{"rows": […]}`.
    @Test func webAnnotationsComeInEveryShapeTheModelAllows() throws {
        func ids(_ text: String) throws -> [String] {
            webAnnotationItems(try JSONSerialization.jsonObject(with: Data(text.utf8))).compactMap {
                $0["id"] as? String
            }
        }
        let one = #"{"id": "a", "type": "Annotation", "target": "urn:x:1"}"#
        let two = #"{"id": "b", "type": ["Annotation"], "target": "urn:x:2"}"#
        let hypothesis = #"{"id": "h", "uri": "https://example.org", "target": [{"source": "https://example.org"}]}"#
        #expect(try ids(one) == ["a"])
        #expect(try ids("[\(one), \(two), \(hypothesis)]") == ["a", "b", "h"])
        #expect(try ids(#"{"type": "AnnotationPage", "items": [\#(one), \#(two)]}"#) == ["a", "b"])
        #expect(
            try ids(
                #"{"type": "AnnotationCollection", "total": 3, "first": {"type": "AnnotationPage", "items": [\#(one)], "next": {"type": "AnnotationPage", "items": [\#(two), \#(hypothesis)]}}}"#
            ) == ["a", "b", "h"])
        #expect(try ids(#"{"total": 1, "rows": [\#(hypothesis)]}"#) == ["h"])
        #expect(try ids(#"{"type": "Person", "name": "not an annotation"}"#).isEmpty)
        #expect(try ids(#"[1, "two", null]"#).isEmpty)
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

extension LuaValue {
    /// The value written so that two readers' values compare as text: tables with their keys
    /// sorted (nil values dropped, as Lua drops them), strings as hex bytes, numbers integral
    /// or to 17 digits.
    var canonical: String {
        switch self {
        case .table(let fields):
            var entries = [String: String]()
            for field in fields {
                if field.value == .null {
                    entries[field.key.canonical] = nil
                } else {
                    entries[field.key.canonical] = field.value.canonical
                }
            }
            return "{"
                + entries.sorted { Array($0.key.utf8).lexicographicallyPrecedes($1.key.utf8) }
                .map { $0.key + "=" + $0.value }.joined(separator: ",") + "}"
        case .string(let text): return "s" + text.utf8.map { String(format: "%02x", $0) }.joined()
        case .number(let value):
            return value == value.rounded(.down) && abs(value) < 9_007_199_254_740_992
                ? "n\(Int(value))" : "n" + String(format: "%.17g", value)
        case .boolean(let value): return "b\(value)"
        case .null: return "bnil"
        }
    }
}
