"""Models from other toolkits brought into aiayn (`aiayn import`)."""
