import MarginCLI
import MarginCore
import MarginNetwork
import MarginPostgres
import MarginServe
import Poppler
import Snowball
import Tesseract

// `margin-full`: every command, downloads, team libraries on PostgreSQL and `margin serve`.
PDFEngines.install(PopplerEngine())
TextRecognizers.install(TesseractRecognizer())
Stemmers.install(SnowballStemmer())
Services.current = Services(
    downloader: { HTTPDownloader(configuration: $0) },
    backends: [PostgresLibraryDatabase.backend],
    serve: { library, settings, ready in
        try await ReaderServer(library: library, settings: settings).run(ready: ready)
    })
await Margin.main()
