-- AlterTable
ALTER TABLE "events" ADD COLUMN     "trace_context" TEXT;

