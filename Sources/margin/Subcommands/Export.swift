import ArgumentParser
import Foundation
import MarginKit

extension ExportFormat: ExpressibleByArgument {}

extension Margin {
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Export annotations as Markdown, JSON (the backup format), CSV or an annotated PDF.",
            discussion: """
                Without -o, markdown, json and csv go to stdout; a PDF is written to \
                <title-slug>-annotated.pdf. With several books, json and csv make one document; \
                markdown and pdf make one file per book in the folder -o names. An existing file \
                is kept unless --force; files are written whole or not at all.

                The PDF is a copy of the book with each highlight as a /Highlight annotation and \
                each page memo as a /Text note, which Okular, Evince, Acrobat and pdf.js show. The \
                cached PDF is never modified.

                Examples:
                  margin export --all --format json -o backup.json
                  margin export 3 --format markdown > notes.md
                  margin export 3 --format pdf -o annotated.pdf
                """)

        @Argument(help: "The books.") var books: [String] = []
        @Flag(help: "Every book in the library.") var all = false
        @Option(help: "markdown, json, csv or pdf.") var format: ExportFormat
        @Option(name: [.customShort("o"), .long], help: ArgumentHelp("The output file (or folder for several books).", valueName: "PATH"))
        var output: String?
        @Flag(help: "Overwrite existing files.") var force = false
        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if all && !books.isEmpty { throw ValidationError("give either BOOK... or --all, not both") }
            if !all && books.isEmpty { throw ValidationError("give the books to export, or --all") }
            if output == "-" && format == .pdf { throw ValidationError("a PDF can't go to stdout; give -o FILE") }
        }

        func run() async throws {
            let library = try global.openLibrary()
            // Every selector is resolved first: one unknown book and nothing happens.
            let selected = all ? try library.allBooks() : try library.resolveAll(books)
            let perBook = selected.count > 1 && (format == .markdown || format == .pdf)
            if perBook || (output.map(isFolder) ?? false) {
                let folder = output ?? FileManager.default.currentDirectoryPath
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                var written = [String]()
                for book in selected {
                    let path = folder + "/" + fileName(book)
                    written.append(try await write([book], to: path, library))
                }
                return report(written)
            }
            if format == .pdf {
                let path = output ?? (selected.first.map(fileName) ?? "export.pdf")
                return report([try await write(selected, to: path, library)])
            }
            let text = try library.exportText(selected, format: format)
            if let output, output != "-" {
                report([try writeAtomically(to: output, force: force) { try Data(text.utf8).write(to: URL(fileURLWithPath: $0)) }])
            } else {
                FileHandle.standardOutput.write(Data(text.utf8))
            }
        }

        private func write(_ books: [Book], to path: String, _ library: Library) async throws -> String {
            if format == .pdf, let book = books.first {
                return try await library.exportPDF(book, to: path, force: force)
            }
            let text = try library.exportText(books, format: format)
            return try writeAtomically(to: path, force: force) { try Data(text.utf8).write(to: URL(fileURLWithPath: $0)) }
        }

        private func fileName(_ book: Book) -> String {
            format == .pdf ? "\(slug(book.title))-annotated.pdf" : "\(slug(book.title)).\(format.fileExtension)"
        }

        private func isFolder(_ path: String) -> Bool {
            var isDirectory: ObjCBool = false
            return path.hasSuffix("/") || (FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue)
        }

        private func report(_ files: [String]) {
            if global.json {
                try? Console.json(["files": files])
            } else {
                files.forEach { Console.out("wrote \($0)") }
            }
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Merge a JSON export (backup) into the library.",
            discussion: """
                Books are matched by SHA-256 (a book not in the library is created and its PDF \
                fetched from its sources when needed); annotations by UUID. Importing the same \
                file twice changes nothing; when both sides changed an annotation, the newer \
                updatedAt wins and it is counted as a conflict. One transaction: a malformed file \
                imports nothing and the error says where. --dry-run reports the counts only.
                """)

        @Argument(help: "The JSON file (- for stdin).") var file: String
        @Flag(help: "Report what would change without writing.") var dryRun = false
        @OptionGroup var global: GlobalOptions

        func run() throws {
            let data: Data
            if file == "-" {
                data = FileHandle.standardInput.readDataToEndOfFile()
            } else {
                guard FileManager.default.fileExists(atPath: file) else { throw MarginError.noSuchFile(file) }
                data = try Data(contentsOf: URL(fileURLWithPath: file))
            }
            let backup = try Library.parseBackup(data, name: file == "-" ? "stdin" : file)
            let library = try global.openLibrary()
            let report = try library.importBackup(backup, dryRun: dryRun)
            if global.json { return try Console.json(report) }
            let total = report.total
            let verb = dryRun ? "would import" : "imported"
            Console.out("\(verb): \(total.added) added, \(total.updated) updated, \(total.unchanged) unchanged, \(total.conflicts) conflicts; books: \(report.books.added) new, \(report.books.unchanged) known")
        }
    }

    struct ImportAnnotations: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import-annotations",
            abstract: "Take in the annotations other viewers left inside a book's PDF.",
            discussion: """
                Highlight, Underline, StrikeOut and Squiggly become highlights with the text under \
                them; Text and FreeText notes become memos on their page. Authors and dates are \
                kept. Running it again adds nothing.
                """)

        @Argument(help: "The book.") var book: String
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let library = try global.openLibrary()
            let report = try await library.importPDFAnnotations(library.resolve(book))
            if global.json { return try Console.json(report) }
            Console.out("highlights: \(report.highlights.added) added, \(report.highlights.unchanged) already there; memos: \(report.memos.added) added, \(report.memos.unchanged) already there")
        }
    }
}
