import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension ExportFormat: ExpressibleByArgument {}

extension Margin {
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract:
                "Export annotations as Markdown, JSON (the backup format), CSV or an annotated PDF; or the books as BibTeX.",
            discussion: """
                Without -o, markdown, json and csv go to stdout (with --json, wrapped in one JSON \
                document: {"format", "books", "text"}); a PDF is written to <title-slug>-annotated.pdf. \
                Several books make one json or csv document, and one markdown document on stdout; \
                with -o, several books in markdown or pdf make one file per book in the folder \
                -o names (created if needed; the current folder for pdf without -o), named \
                <title-slug>-<id>. An existing file is \
                kept unless --force; files are written whole or not at all, and several files all \
                or none. "wrote FILE" lines go to stderr; --json prints {"files": [...]} instead.

                The PDF is a copy of the book with each highlight as a /Highlight annotation, \
                each page memo as a /Text note, its bookmarks as outline entries under a \
                "Bookmarks" entry after the document's own, and its memo and memos on the whole \
                book as notes on the first page (import-annotations reads them back as such), \
                which Okular, Evince, Acrobat and pdf.js show. The cached PDF is never modified.

                Each annotation carries its page's printed number (page label) and chapter (the \
                deepest outline entry holding its page); Markdown groups a book's pages under \
                their chapters. bibtex writes the books themselves as references (as margin cite \
                --format bibtex does).

                For other tools: web-annotation writes one W3C AnnotationCollection (JSON-LD: \
                each highlight a TextQuoteSelector, a page=N FragmentSelector refined by a \
                TextPositionSelector, its note a TextualBody; bookmarks and memos too); readwise \
                Readwise's CSV (Highlight, Title, Author, URL, Note, Location, Date); xfdf a file \
                per book for Acrobat, Foxit and Okular (bookmarks are not annotations and stay \
                out); koreader a BOOK.sdr/metadata.pdf.lua folder per book in the folder -o \
                names, which KOReader reads beside the document or by its checksum (memos on a \
                whole book have no place there); obsidian a note per book in the folder -o names, \
                with front matter and a block id per annotation that stays the same from one \
                export to the next. margin import reads web-annotation, xfdf and koreader back.

                Examples:
                  margin export --all --format json -o backup.json
                  margin export 3 --format markdown > notes.md
                  margin export 3 --format pdf -o annotated.pdf
                  margin export 3 --format pdf --text-layer -o searchable.pdf
                  margin export --all --format bibtex -o library.bib
                """
        )

        @Argument(help: "The books.") var books: [String] = []
        @Flag(help: "Every book in the library.") var all = false
        @Option(
            help: "markdown, json, csv, pdf, bibtex, web-annotation, xfdf, koreader, obsidian or readwise.")
        var format: ExportFormat
        @Option(
            name: [.customShort("o"), .long],
            help: ArgumentHelp("The output file (or folder for several books).", valueName: "PATH"))
        var output: String?
        @Flag(help: "Overwrite existing files.") var force = false
        @Flag(
            help:
                "With --format pdf: write the text OCR read on scanned pages as an invisible text layer, which pdftotext, pdfgrep and viewers read."
        ) var textLayer = false
        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if textLayer && format != .pdf { throw ValidationError("--text-layer goes with --format pdf") }
            if all && !books.isEmpty { throw ValidationError("give either BOOK... or --all, not both") }
            if !all && books.isEmpty { throw ValidationError("give the books to export, or --all") }
            if output == "-" && format == .pdf { throw ValidationError("a PDF can't go to stdout; give -o FILE") }
            if format.writesFolder && (output == nil || output == "-") {
                let what = format == .koreader ? "a BOOK.sdr folder per book" : "a note per book"
                throw ValidationError("--format \(format.rawValue) writes a folder (\(what)): give -o FOLDER")
            }
        }

        func run() async throws {
            let library = try global.openLibrary()
            // Every selector is resolved first: one unknown book and nothing happens.
            let selected = try await all ? library.allBooks() : library.resolveAll(books)
            if selected.isEmpty { throw MarginError.emptyLibrary }
            let toFolder = output.map(isFolder) ?? false
            let named = output != nil && output != "-"
            if let folder = output,
                format.writesFolder || (format == .xfdf && named && (selected.count > 1 || toFolder))
            {
                return try await report(try await writeFiles(selected, to: folder, library))
            }
            let perBook =
                (format == .pdf && (selected.count > 1 || toFolder))
                || (format == .markdown && named && (selected.count > 1 || toFolder))
            if perBook {
                // One file per book, named by title and id so no two collide; all or nothing.
                let folder = output ?? FileManager.default.currentDirectoryPath
                try makeOutputFolder(folder)
                let files = AtomicFiles(force: force)
                for book in selected {
                    let path = folder + "/" + fileName(book, unique: true)
                    if format == .pdf {
                        try await library.exportPDF(book, to: path, in: files, textLayer: textLayer)
                    } else {
                        let data = Data(try await library.exportText([book], format: format).utf8)
                        try files.stage(path, check: .bytes(data.count)) { try writeData(data, to: $0) }
                    }
                }
                return try await report(try files.commit())
            }
            if format == .pdf {
                let path = output ?? (selected.first.map { fileName($0, unique: false) } ?? "export.pdf")
                return try await report([
                    try await library.exportPDF(selected[0], to: path, force: force, textLayer: textLayer)
                ])
            }
            let text = try await library.exportText(selected, format: format)
            if let output, output != "-" {
                let path = toFolder ? output + "/" + "margin-export.\(format.fileExtension)" : output
                let data = Data(text.utf8)
                return try await report([
                    try writeAtomically(to: path, force: force, check: .bytes(data.count)) {
                        try writeData(data, to: $0)
                    }
                ])
            }
            // To a terminal, without control characters; to a pipe or file, byte for byte.
            let write = {
                Console.write(Console.stdoutIsTTY ? terminalSafe(text, keep: ["\r"]) : text, to: STDOUT_FILENO)
            }
            // A JSON export is its own document; any other is one on stdout as a string, with what it holds.
            if format == .json { return write() }
            try await global.show(TextExport(format: format.rawValue, books: selected.compactMap(\.id), text: text)) {
                write()
            }
        }

        /// Writes an export made of a file (or folder) per book into `folder`, all or nothing.
        private func writeFiles(_ books: [Book], to folder: String, _ library: Library) async throws -> [String] {
            try makeOutputFolder(folder)
            // Each book's name: KOReader finds a sidecar by its document's name; a note is
            // named by its title. Two books of one name are told apart by their ids.
            var names = [Int64: String]()
            for book in books {
                let name =
                    format == .koreader
                    ? try await library.documentName(book) ?? slug(book.title)
                    : book.title.map { "/\\:*?\"<>|#^[]".contains($0) ? "-" : $0 }.reduce(into: "") { $0.append($1) }
                names[book.id ?? 0] = String(name.prefix(120))
            }
            let counts = Dictionary(names.values.map { ($0.lowercased(), 1) }, uniquingKeysWith: +)
            let exported = try await library.exportFiles(books, format: format) { book in
                let name = names[book.id ?? 0] ?? slug(book.title)
                return counts[name.lowercased(), default: 0] > 1 ? "\(name)-\(book.id ?? 0)" : name
            }
            let files = AtomicFiles(force: force)
            for file in exported {
                let path = folder + "/" + file.path
                try makeOutputFolder((path as NSString).deletingLastPathComponent)
                let data = Data(file.contents.utf8)
                try files.stage(path, check: .bytes(data.count)) { try writeData(data, to: $0) }
            }
            return try files.commit()
        }

        private func fileName(_ book: Book, unique: Bool) -> String {
            let base = unique ? "\(slug(book.title))-\(book.id ?? 0)" : slug(book.title)
            return format == .pdf ? "\(base)-annotated.pdf" : "\(base).\(format.fileExtension)"
        }

        private func isFolder(_ path: String) -> Bool {
            var isDirectory: ObjCBool = false
            return path.hasSuffix("/")
                || (FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue)
        }

        private func makeOutputFolder(_ folder: String) throws {
            do {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw MarginError.io("cannot create the folder \(folder): \(error.localizedDescription)")
            }
        }

        /// What was written: a JSON document with --json, else one "wrote" line each on stderr.
        private func report(_ files: [String]) async throws {
            try await global.show(["files": files]) {
                files.forEach { global.note("wrote \($0)") }
            }
        }
    }

    /// `export --json` of a text format without -o.
    struct TextExport: Encodable {
        var format: String
        var books: [Int64]
        var text: String
    }

    struct ImportAnnotations: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import-annotations",
            abstract: "Take in the annotations other viewers left inside a book's PDF.",
            discussion: """
                Highlight, Underline, StrikeOut and Squiggly become highlights with the text under \
                them; Text and FreeText notes become memos on their page. Authors and dates are \
                kept. Running it again adds nothing.
                """
        )

        @Argument(help: "The book.") var book: String
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let library = try global.openLibrary()
            let report = try await library.importPDFAnnotations(library.resolve(book))
            try await global.show(report) {
                Console.out(
                    "highlights: \(report.highlights.added) added, \(report.highlights.unchanged) already there; memos: \(report.memos.added) added, \(report.memos.unchanged) already there"
                )
            }
        }
    }
}
