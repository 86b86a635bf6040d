import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension RenderFormat: ExpressibleByArgument {}

extension Margin {
    struct Render: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "render",
            abstract: "Render a page to PNG, SVG or PDF.",
            discussion: """
                PNG at --dpi (default 150), or fitted into --width/--height pixels keeping the \
                aspect ratio; SVG and PDF are vector. Without -o the file is \
                <title-slug>-p<N>.<format> in the current folder; -o - writes to stdout. An \
                existing file is kept unless --force.

                Examples:
                  margin render 3 --page 12 --dpi 300
                  margin render "deep learning" --page 1 --width 800 -o cover.png
                  margin render 3 --page 2 --format svg -o - > page.svg
                """
        )

        @Argument(help: "The book.")
        var book: String

        @Option(help: ArgumentHelp("The page to render (1-based).", valueName: "N"))
        var page: Int

        @Option(help: ArgumentHelp("Resolution of a PNG in dots per inch.", valueName: "D"))
        var dpi: Double = 150

        @Option(help: ArgumentHelp("Fit the PNG into W pixels wide.", valueName: "W"))
        var width: Int?

        @Option(help: ArgumentHelp("Fit the PNG into H pixels high.", valueName: "H"))
        var height: Int?

        @Option(help: "Output format: png, svg or pdf.")
        var format: RenderFormat = .png

        @Flag(help: "Draw the book's highlights and bookmarks on the page.")
        var annotations = false

        @Option(
            name: [.customShort("o"), .long], help: ArgumentHelp("Output file, or - for stdout.", valueName: "FILE"))
        var output: String?

        @Flag(help: "Overwrite an existing output file.")
        var force = false

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            guard dpi >= RenderRequest.minDPI, dpi.isFinite else {
                throw ValidationError("--dpi must be at least \(Int(RenderRequest.minDPI)), not \(dpi)")
            }
            if let width, width <= 0 { throw ValidationError("--width must be more than 0") }
            if let height, height <= 0 { throw ValidationError("--height must be more than 0") }
            if output == "-" && global.json {
                throw ValidationError("-o - writes the image to stdout; it can't be combined with --json")
            }
        }

        func run() async throws {
            let library = try global.openLibrary()
            let selected = try await library.resolve(book)
            var request = RenderRequest(page: page)
            request.format = format
            request.dpi = dpi
            request.width = width
            request.height = height
            request.annotations = annotations
            if output == "-" {
                let folder = NSTemporaryDirectory() + "margin-render-" + UUID().uuidString
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                defer { try? FileManager.default.removeItem(atPath: folder) }
                let result = try await library.render(selected, request, to: folder + "/page", force: true)
                result.notes.forEach { global.note("note: \($0)") }
                let data = try Data(contentsOf: URL(fileURLWithPath: result.file))
                FileHandle.standardOutput.write(data)
                return
            }
            let target = output ?? library.defaultRenderName(selected, request)
            let result = try await library.render(selected, request, to: target, force: force)
            result.notes.forEach { global.note("note: \($0)") }
            try await global.show(result) {
                let size =
                    format == .png ? "\(result.width)×\(result.height) px" : "\(result.width)×\(result.height) pt"
                Console.out("wrote \(result.file) (page \(page), \(size))")
            }
        }
    }
}
