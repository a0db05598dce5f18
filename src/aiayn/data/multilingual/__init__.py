"""`aiayn prepare --langs`: one data directory for many translation directions from the Bible's
versions, each verse read once; `pipeline.py` runs it, on the bilingual pipeline's parts."""
