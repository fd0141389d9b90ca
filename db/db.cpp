// db: see ARCHITECTURE.md. (module sources are added as the module is built)
