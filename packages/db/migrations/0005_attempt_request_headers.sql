-- AlterTable
ALTER TABLE "attempts" ADD COLUMN     "request_headers" JSONB;
